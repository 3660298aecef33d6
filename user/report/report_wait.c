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
#define EXIT_WAKE_NS    10000000ull  /* a waker dead this soon after: a join, not data */

const char *const rpt_tw_names[RPT_TW_N] = {
	[RPT_TW_CPU] = "on_cpu", [RPT_TW_RUNNABLE] = "runnable", [RPT_TW_FILE_IO] = "file_io",
	[RPT_TW_GPU] = "gpu_sync", [RPT_TW_DATA] = "waiting_for_data", [RPT_TW_SLEEP] = "other_sleep",
};
const char *const rpt_wa_names[RPT_WA_N] = {
	[RPT_WA_READ] = "reading_files", [RPT_WA_CPU] = "on_cpu",
	[RPT_WA_RUNNABLE] = "runnable", [RPT_WA_OTHER] = "other",
};

struct ivs {
	struct tstate_iv *a;
	size_t n, cap;
};

struct span { uint64_t s, e; };

struct spans {
	struct span *a;
	size_t n, cap;
};

static int spans_add(struct spans *v, uint64_t s, uint64_t e)
{
	if (e <= s)
		return 0;
	if (array_grow((void **)&v->a, &v->cap, v->n + 1, sizeof(*v->a)))
		return -ENOMEM;
	v->a[v->n++] = (struct span){ s, e };
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* Sort and merge overlapping spans. */
static void spans_norm(struct spans *v)
{
	size_t k = 0;

	if (v->n < 2)           /* nothing to merge; and qsort must not see a NULL array */
		return;
	qsort(v->a, v->n, sizeof(*v->a), by_start);
	for (size_t i = 0; i < v->n; i++) {
		if (k && v->a[i].s <= v->a[k - 1].e) {
			if (v->a[i].e > v->a[k - 1].e)
				v->a[k - 1].e = v->a[i].e;
		} else {
			v->a[k++] = v->a[i];
		}
	}
	v->n = k;
}

/* ns of [s, e) inside the (normalised) spans v */
static uint64_t spans_overlap(const struct spans *v, uint64_t s, uint64_t e)
{
	size_t lo = 0, hi = v->n;
	uint64_t t = 0;

	while (lo < hi) {               /* first span ending after s */
		size_t mid = (lo + hi) / 2;

		if (v->a[mid].e <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < v->n && v->a[i].s < e; i++) {
		uint64_t a = v->a[i].s > s ? v->a[i].s : s, b = v->a[i].e < e ? v->a[i].e : e;

		if (b > a)
			t += b - a;
	}
	return t;
}

/* [s, e) minus the spans v, as spans appended to out */
static int spans_minus(const struct spans *v, uint64_t s, uint64_t e, struct spans *out)
{
	uint64_t at = s;

	for (size_t i = 0; i < v->n && at < e; i++) {
		if (v->a[i].e <= at || v->a[i].s >= e)
			continue;
		if (v->a[i].s > at && spans_add(out, at, v->a[i].s))
			return -ENOMEM;
		at = v->a[i].e;
	}
	return at < e ? spans_add(out, at, e) : 0;
}

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
	return !(*d > 1 && *d - 1 >= woke && *d - 1 - woke < EXIT_WAKE_NS);
}

static bool data_wake(const struct sched_tab *t, const struct tstate_iv *iv, struct kmap *deaths)
{
	return is_sleep(iv->state) && data_waker(t, iv, iv->end, deaths);
}

struct worker_th {              /* a waking process's main thread inside the windows */
	uint32_t pid;
	struct spans reads;     /* its read calls (clipped later) */
	uint64_t read_ns;
};

struct pass3 {
	struct rpt_wait *w;
	struct spans loop_calls;        /* the loop thread's file calls */
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

/* Pass 3: the loop thread's file calls; the workers' reads inside the windows. */
static int pass3(struct rpt_model *m, struct pass3 *p, const struct spans *win)
{
	const struct gpuio_hdr *h;
	int rc = gpuio_cap_reader__rewind(m->r);

	if (rc < 0)
		return rc;
	while ((rc = gpuio_cap_reader__next(m->r, &h)) > 0) {
		const struct gpuio_vfs_event *e = (const void *)h;
		uint64_t end, in;
		struct worker_th *wt;

		if (h->type != GPUIO_REC_VFS || gpuio_call__is_async(e->call))
			continue;
		end = rpt_end_of(h->ts, e->dur_ns);
		if (h->tid == p->w->tid) {
			if (spans_add(&p->loop_calls, h->ts, end))
				return -ENOMEM;
			continue;
		}
		if (h->tid != h->pid || !gpuio_call__is_read(e->call) || e->ret <= 0 ||
		    !(wt = worker_of(p, h->pid)) || !(in = spans_overlap(win, h->ts, end)))
			continue;
		if (spans_add(&wt->reads, h->ts, end))
			return -ENOMEM;
		{
			uint64_t *fi = kmap__get(&m->file_map, e->dev, e->ino);

			if (fi && file_add(p->w, (uint32_t)*fi, (uint64_t)e->ret, in))
				return -ENOMEM;
		}
	}
	if (rc < 0) {
		snprintf(m->err, sizeof(m->err), "%s: %s", m->path, gpuio_cap_reader__error(m->r));
		return -EBADMSG;
	}
	return 0;
}

/* "DIR/" + "*EXT" when the top files share their directory and extension. */
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

static int build_steps(struct rpt_wait *w, const struct spans *win)
{
	struct spans ep = { 0 };
	int rc = 0;

	for (size_t i = 0; i < win->n && !rc; i++) {
		if (ep.n && win->a[i].s - ep.a[ep.n - 1].e < STEP_MERGE_NS)
			ep.a[ep.n - 1].e = win->a[i].e;
		else
			rc = spans_add(&ep, win->a[i].s, win->a[i].e);
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

/* The loop's CPU time between the merged waits of one fetch: waiting for data too. */
static int fetch_cpu(struct rpt_wait *w, const struct ivs *v, size_t n0, const struct spans *win)
{
	struct spans gaps = { 0 };
	int rc = 0;

	for (size_t i = 0; i + 1 < win->n && !rc; i++)
		if (win->a[i + 1].s - win->a[i].e < STEP_MERGE_NS)
			rc = spans_add(&gaps, win->a[i].e, win->a[i + 1].s);
	for (size_t j = n0; j < v->n && v->a[j].tid == w->tid && !rc; j++) {
		uint64_t in;

		if (v->a[j].state != TS_RUNNING)
			continue;
		in = spans_overlap(&gaps, v->a[j].ts, v->a[j].end);
		w->ns[RPT_TW_CPU] -= in;
		w->ns[RPT_TW_DATA] += in;
	}
	free(gaps.a);
	return rc;
}

int rpt_wait_build(struct rpt_model *m)
{
	struct ivs v = { 0 };
	struct kmap deaths = { 0 };
	struct spans win = { 0 }, sleeps = { 0 }, rest = { 0 }, syncs = { 0 };
	struct pass3 p = { 0 };
	struct rpt_wait *w;
	uint64_t best = 0, best_cpu = 0, best_kids = 0;
	size_t i, j, n0 = 0;
	int rc = -ENOMEM;

	if (!m->sched.n)
		return 0;
	sched_tab__sort(&m->sched);
	if ((rc = sched_tab__states(&m->sched, m->last_ts, collect, &v)))
		goto out;
	rc = 0;
	if (!v.n)               /* no thread states: no loop to find */
		goto out;
	rc = -ENOMEM;
	if (v.n > 1)
		qsort(v.a, v.n, sizeof(*v.a), by_thread_ts);
	w = calloc(1, sizeof(*w));
	if (!w)
		goto out;
	m->wait = w;
	/* the loop thread */
	for (i = 0; i < v.n; i = j) {
		uint64_t data = 0, cpu = 0, kids = 0;

		for (j = i; j < v.n && v.a[j].tid == v.a[i].tid; j++) {
			if (data_wake(&m->sched, &v.a[j], &deaths)) {
				uint64_t *pi = kmap__get(&m->proc_map, v.a[j].waker_pid, 0);

				data += v.a[j].end - v.a[j].ts;
				if (pi && m->procs[*pi].ppid == v.a[j].pid)
					kids += v.a[j].end - v.a[j].ts;
			}
			if (v.a[j].state == TS_RUNNING)
				cpu += v.a[j].end - v.a[j].ts;
		}
		if (kids > best_kids || (kids == best_kids && data > best) ||
		    (!best_kids && !best && !data && cpu > best_cpu)) {
			best_kids = kids;
			best = data;
			best_cpu = cpu;
			w->pid = v.a[i].pid;
			w->tid = v.a[i].tid;
			n0 = i;
		}
	}
	w->span_s = v.a[n0].ts;
	for (j = n0; j < v.n && v.a[j].tid == w->tid; j++)
		w->span_e = v.a[j].end;
	/* its waits for data (windows), and the processes that ended them */
	for (j = n0; j < v.n && v.a[j].tid == w->tid; j++) {
		const struct tstate_iv *iv = &v.a[j];

		if (is_sleep(iv->state) && spans_add(&sleeps, iv->ts, iv->end))
			goto out;
		if (!data_wake(&m->sched, iv, &deaths))
			continue;
		if (spans_add(&win, iv->ts, iv->end))
			goto out;
		for (i = 0; i < w->nwakers && w->wakers[i].pid != iv->waker_pid; i++)
			;
		if (i == w->nwakers && i < RPT_WAKERS_MAX)
			w->wakers[w->nwakers++].pid = iv->waker_pid;
		if (i < RPT_WAKERS_MAX) {
			w->wakers[i].wakes++;
			w->wakers[i].ns += iv->end - iv->ts;
		}
	}
	spans_norm(&win);
	spans_norm(&sleeps);
	p.w = w;
	p.wk = calloc(w->nwakers ? w->nwakers : 1, sizeof(*p.wk));
	if (!p.wk)
		goto out;
	for (i = 0; i < w->nwakers; i++)
		p.wk[p.nwk++].pid = w->wakers[i].pid;
	if ((rc = pass3(m, &p, &win)))
		goto out;
	rc = -ENOMEM;
	spans_norm(&p.loop_calls);
	for (size_t k = 0; k < m->nsyncs; k++)
		if (m->syncs[k].dev == w->tid && spans_add(&syncs, m->syncs[k].s, m->syncs[k].e))
			goto out;
	spans_norm(&syncs);
	/* the loop's time: state, then what its sleeps were */
	for (j = n0; j < v.n && v.a[j].tid == w->tid; j++) {
		const struct tstate_iv *iv = &v.a[j];
		uint64_t d = iv->end - iv->ts, io, gpu;

		if (iv->state == TS_RUNNING) {
			w->ns[RPT_TW_CPU] += d;
			continue;
		}
		if (!is_sleep(iv->state)) {
			/* woken with data, then waiting for a CPU: still inside the fetch */
			if (iv->state == TS_RUNNABLE && data_waker(&m->sched, iv, iv->ts, &deaths)) {
				w->ns[RPT_TW_DATA] += d;
				w->data_runnable_ns += d;
			} else {
				w->ns[RPT_TW_RUNNABLE] += d;
			}
			continue;
		}
		io = spans_overlap(&p.loop_calls, iv->ts, iv->end);
		rest.n = 0;
		if (spans_minus(&p.loop_calls, iv->ts, iv->end, &rest))
			goto out;
		gpu = 0;
		for (i = 0; i < rest.n; i++)
			gpu += spans_overlap(&syncs, rest.a[i].s, rest.a[i].e);
		w->ns[RPT_TW_FILE_IO] += io;
		w->ns[RPT_TW_GPU] += gpu;
		if (data_wake(&m->sched, iv, &deaths))
			w->ns[RPT_TW_DATA] += d - io - gpu;
		else
			w->ns[RPT_TW_SLEEP] += d - io - gpu;
	}
	/* the workers' main threads inside the windows */
	for (size_t k = 0; k < p.nwk; k++) {
		struct worker_th *wt = &p.wk[k];
		uint64_t life_s = UINT64_MAX, life_e = 0, in_all = 0, rd = 0, cpu = 0, run = 0;

		spans_norm(&wt->reads);
		for (i = 0; i < v.n; i++) {
			const struct tstate_iv *iv = &v.a[i];
			uint64_t in;

			if (iv->tid != wt->pid)
				continue;
			if (iv->ts < life_s)
				life_s = iv->ts;
			if (iv->end > life_e)
				life_e = iv->end;
			if (iv->state != TS_RUNNING && is_sleep(iv->state))
				continue;
			/* on a CPU or waiting for one: outside its reads only */
			rest.n = 0;
			if (spans_minus(&wt->reads, iv->ts, iv->end, &rest))
				goto out;
			in = 0;
			for (j = 0; j < rest.n; j++)
				in += spans_overlap(&win, rest.a[j].s, rest.a[j].e);
			if (iv->state == TS_RUNNING)
				cpu += in;
			else
				run += in;
		}
		if (life_e <= life_s)
			continue;
		in_all = spans_overlap(&win, life_s, life_e);
		for (i = 0; i < wt->reads.n; i++)
			rd += spans_overlap(&win, wt->reads.a[i].s, wt->reads.a[i].e);
		w->act_ns[RPT_WA_READ] += rd;
		w->act_ns[RPT_WA_CPU] += cpu;
		w->act_ns[RPT_WA_RUNNABLE] += run;
		w->act_ns[RPT_WA_OTHER] += in_all > rd + cpu + run ? in_all - rd - cpu - run : 0;
	}
	rc = build_steps(w, &win);
	if (!rc)
		rc = fetch_cpu(w, &v, n0, &win);
	w->gaps = m->sched.gaps;
out:
	for (size_t k = 0; k < p.nwk; k++)
		free(p.wk[k].reads.a);
	free(p.wk);
	free(p.loop_calls.a);
	free(win.a);
	free(sleeps.a);
	free(rest.a);
	free(syncs.a);
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
